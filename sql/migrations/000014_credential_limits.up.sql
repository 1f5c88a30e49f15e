-- A registered key signs in to the organization it was registered in, and never with a role stronger
-- than the role of whoever registered it (a manager cannot mint an admin credential by registering a
-- key for an account that is, or later becomes, admin).
ALTER TABLE user_key ADD COLUMN organization_id uuid;
ALTER TABLE user_key ADD COLUMN max_org_role text;

-- Keys registered before: a bot User's key belongs to its account's organization; a person's key to the
-- one organization the person is a member of. A key of a person in several organizations cannot be
-- attributed to one, so it is removed (it would sign in to any of them); register it again.
UPDATE user_key k SET organization_id = sa.organization_id FROM service_account sa WHERE sa.user_id = k.user_id;
UPDATE user_key k SET organization_id = bw.organization_id FROM bridge_worker bw
WHERE bw.user_id = k.user_id AND k.organization_id IS NULL;
UPDATE user_key k SET organization_id = m.organization_id FROM organization_member m
WHERE m.user_id = k.user_id AND k.organization_id IS NULL
  AND (SELECT count(*) FROM organization_member m2 WHERE m2.user_id = k.user_id) = 1;
DELETE FROM user_key WHERE organization_id IS NULL;
-- Who registered them is unknown, and managers could: they sign in with at most the manager role until
-- an admin registers them again.
UPDATE user_key SET max_org_role = 'manager';

ALTER TABLE user_key ALTER COLUMN organization_id SET NOT NULL;
-- A key belongs to a membership: it goes when the membership (or the User, or the organization) goes.
ALTER TABLE user_key ADD CONSTRAINT user_key_member_fkey FOREIGN KEY (organization_id, user_id)
    REFERENCES organization_member (organization_id, user_id) ON DELETE CASCADE;
ALTER TABLE user_key ALTER COLUMN max_org_role SET NOT NULL;
ALTER TABLE user_key ADD CONSTRAINT user_key_max_org_role_check CHECK (max_org_role IN ('admin', 'manager', 'member', 'viewer'));
-- Within an organization a key signs in as one identity only; another organization may register the
-- same public key without learning that it exists elsewhere.
ALTER TABLE user_key DROP CONSTRAINT user_key_kid_key;
ALTER TABLE user_key ADD CONSTRAINT user_key_organization_kid_key UNIQUE (organization_id, kid);
CREATE INDEX user_key_kid_idx ON user_key (kid);
DROP INDEX user_key_user_idx;
CREATE INDEX user_key_user_idx ON user_key (organization_id, user_id, created_at);

-- A BridgeWorker's Secret signs in with at most the role of whoever had it issued (its creator, or the
-- caller of an update that raised the worker's role and so received a new Secret). Workers created
-- before were created by someone at least as strong as their role then: their current role.
ALTER TABLE bridge_worker ADD COLUMN secret_max_org_role text;
UPDATE bridge_worker bw SET secret_max_org_role = m.org_role FROM organization_member m
WHERE m.organization_id = bw.organization_id AND m.user_id = bw.user_id;
UPDATE bridge_worker SET secret_max_org_role = 'viewer' WHERE secret_max_org_role IS NULL;
ALTER TABLE bridge_worker ALTER COLUMN secret_max_org_role SET NOT NULL;
ALTER TABLE bridge_worker ADD CONSTRAINT bridge_worker_secret_max_org_role_check
    CHECK (secret_max_org_role IN ('admin', 'manager', 'member', 'viewer'));
