-- A Release publishing a ChangeOrder keeps it: deleting a ChangeOrder that Releases name is refused (409).
ALTER TABLE "release" ADD CONSTRAINT release_change_order_fk FOREIGN KEY (change_order_id) REFERENCES change_order ON DELETE RESTRICT;
CREATE INDEX release_change_order_fk_idx ON "release" (change_order_id) WHERE change_order_id IS NOT NULL;
