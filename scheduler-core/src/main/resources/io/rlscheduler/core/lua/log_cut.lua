-- log_cut.lua: notes in a task's record that a master cut the task's log at its size limit
-- (log_cut: the bytes the log file holds before its cut marker). Written once: the first note
-- stays, a later one changes nothing. A master-side note of a fact about the log file, not a move
-- of the task's state or ownership: no epoch or owner to check, any master that cut may write it.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] task id, [2] the bytes kept (decimal text)
-- Returns JSON: {r="OK"} | {r="DUPLICATE", at} (a cut is noted already) | {r="UNKNOWN_TASK"}
local st = load_task(ARGV[1])
if not st then return reply({r = 'UNKNOWN_TASK'}) end
if st.log_cut then return reply({r = 'DUPLICATE', at = st.log_cut}) end
st.log_cut = ARGV[2]
save_task(st)
return reply({r = 'OK'})
