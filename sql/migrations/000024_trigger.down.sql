ALTER TABLE revision DROP COLUMN validation_errors, DROP COLUMN validation_warnings, DROP COLUMN validation_passed,
    DROP COLUMN validation_trigger_ids, DROP COLUMN value_trigger_ids;
ALTER TABLE unit DROP COLUMN apply_gates, DROP COLUMN apply_warnings, DROP COLUMN validation_errors,
    DROP COLUMN validation_warnings, DROP COLUMN validation_trigger_ids, DROP COLUMN value_trigger_ids;
DROP TABLE trigger;
