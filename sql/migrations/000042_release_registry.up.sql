-- The read-only OCI registry (/v2/) names a Release's repository "<organization slug>/<space slug>/<BundleBaseName>"
-- in lowercase, as OCI repository names are; it finds the Space by its lowercased Slug and a Release by
-- repository and ReleaseNum, or the latest published one.
CREATE INDEX space_slug_lower_idx ON space (organization_id, lower(slug));
CREATE INDEX release_repository_idx ON release (space_id, bundle_base_name, release_num);
