DROP TABLE filter;
