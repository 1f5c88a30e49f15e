-- UnitEvents carry a HiddenReason, as the other records of a Unit do; lists leave hidden ones out unless
-- include_hidden names their reason.
ALTER TABLE unit_event ADD COLUMN hidden_reason text NOT NULL DEFAULT '';
