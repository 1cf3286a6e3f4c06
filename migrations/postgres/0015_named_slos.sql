-- Named SLOs: a team's promises ("chat-interactive", "batch") stored under a name and
-- chosen on any page. The text is the canonical SLO syntax (`ttft:p99<=2s,errors<=1%`).
CREATE TABLE slos (
    name       TEXT        NOT NULL PRIMARY KEY,
    text       TEXT        NOT NULL,
    author     TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
