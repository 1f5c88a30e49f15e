DROP FUNCTION hubd_sequence_pass(int, text[], int);
