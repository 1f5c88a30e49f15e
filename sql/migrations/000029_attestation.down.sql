DROP TABLE attestation;
