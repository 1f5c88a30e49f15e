DROP TABLE event_log;
