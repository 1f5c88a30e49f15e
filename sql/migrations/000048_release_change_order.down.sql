DROP INDEX release_change_order_fk_idx;
ALTER TABLE "release" DROP CONSTRAINT release_change_order_fk;
