DROP TABLE review_comment;
