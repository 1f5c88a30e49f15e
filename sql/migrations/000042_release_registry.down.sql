DROP INDEX release_repository_idx;
DROP INDEX space_slug_lower_idx;
