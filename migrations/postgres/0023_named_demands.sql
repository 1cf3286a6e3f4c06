-- Named demands: the traffic a team plans for ("chat-peak-q1"), stored under a name and
-- chosen on the plan page. The text is the canonical demand syntax
-- (`rate=12; prompt=1000; output=500` or `hourly=…`).
CREATE TABLE demands (
    name       TEXT NOT NULL PRIMARY KEY,
    text       TEXT NOT NULL,
    author     TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
