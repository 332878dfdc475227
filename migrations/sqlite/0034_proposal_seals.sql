-- A decision on a held edit names a digest the server gave with the change
-- it showed; each proposal keeps the random seal that digest is made under
-- (`lessons::shown`). Proposals made before get a seal of their own now.
ALTER TABLE proposals ADD COLUMN seal TEXT NOT NULL DEFAULT '';
UPDATE proposals SET seal = lower(hex(randomblob(16)));
