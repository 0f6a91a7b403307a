-- Escalation policy steps firing (issue 45 §3). The policy an alert follows, settled
-- in its raise's transaction (the notification's, else the tenant default): the alert
-- keeps following it (a later change of default does not move a running chain). A
-- deleted policy ends the chain (SET NULL; `escalation_doc` still names it).
ALTER TABLE alerts ADD COLUMN escalation_policy_id BIGINT
    REFERENCES escalation_policies (id) ON DELETE SET NULL;
-- The alert's escalation as the console shows it ({PolicyId, PolicyName, StepCount,
-- CurrentStep: {AfterMinutes, Instructions}}), rewritten by each step that fires. NULL:
-- the alert follows no policy (today's rounds).
ALTER TABLE alerts ADD COLUMN escalation_doc TEXT;
CREATE INDEX alerts_escalation_policy ON alerts (escalation_policy_id)
    WHERE escalation_policy_id IS NOT NULL;
