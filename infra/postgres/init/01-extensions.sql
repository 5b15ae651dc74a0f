-- Runs once, when the Postgres volume is first created (docker-entrypoint-initdb.d), in the
-- database named by POSTGRES_DB. The tracehub migrations create everything else; pg_trgm
-- is installed here too so that a role without the right to create extensions still gets
-- the trigram index on records.text.
create extension if not exists pg_trgm;
