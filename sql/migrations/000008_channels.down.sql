DROP TABLE command_run;
DROP TABLE channel_lease;
DROP TABLE channel;
