-- The IANA zone a cron's schedule is read in: workflow schedules may name one
-- (`workflow(name, steps, { schedule: { cron, timezone } })`, recorded as the
-- project's cron `__schedule/<workflow>`); every other cron is read in UTC.
ALTER TABLE project_crons ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
