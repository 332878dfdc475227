-- A decision on a held edit names a digest the server gave with the change
-- it showed; each proposal keeps the random seal that digest is made under
-- (`lessons::shown`). Proposals made before get a seal of their own now
-- (`gen_random_uuid` draws from the server's strong generator).
ALTER TABLE proposals ADD COLUMN seal TEXT NOT NULL DEFAULT '';
UPDATE proposals SET seal = replace(gen_random_uuid()::text, '-', '');
