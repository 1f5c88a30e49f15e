DROP TABLE bridge_worker_cursor;
DROP TABLE bridge_worker;
