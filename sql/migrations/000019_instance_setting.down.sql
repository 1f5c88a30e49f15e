DROP TABLE instance_setting;
