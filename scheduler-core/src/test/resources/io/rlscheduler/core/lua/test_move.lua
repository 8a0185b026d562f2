-- test_move.lua (tests only): moves one task with lib.lua's transition(), as the lease scripts do,
-- and answers a refused move as they do: with the error reply itself (claim, submit_claim, cancel,
-- reap, register), or with one item's {r="ERROR", error} in an answer array (ack, finish). The
-- lease scripts check a task's state before they move it, so only this script reaches a refusal.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] task id  [2] the state to move to  [3] 'run' or 'item': how to answer a refusal
-- Returns JSON [{r="OK", epoch, state}], or the refusal as [3] says.
local st = load_task(ARGV[1])
local err = transition(st, ARGV[2], now_parts(), 'moved by a test', 'test')
if err then
  if ARGV[3] == 'item' then return reply({{r = 'ERROR', error = err.err}}) end
  return err
end
save_task(st)
return reply({{r = 'OK', epoch = st.epoch, state = st.state}})
