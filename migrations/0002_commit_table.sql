-- The table of commit identifiers (PostgresStore.Configuration.resolvesCommitOutcomes): a write whose COMMIT
-- reply was lost is looked up here instead of being reported as "outcome unknown".
CREATE TABLE "_corevalue_commits" (
    "id" uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000' PRIMARY KEY,
    "at" timestamptz NOT NULL DEFAULT '-infinity',
    "result" jsonb
);
INSERT INTO "_corevalue_commits" DEFAULT VALUES;
