# iscsi-test-cu's log -> one line per test: "SUITE.TEST passed|failed|skipped TAG" (-v tag=).
# "Suite: X" then "  Test: Y ...[output]passed|FAILED"; [SKIPPED] inside means skipped.
# The verdict ends the Test line or starts a line of its own, and what the suite's cleanup
# prints may follow it on the same line ("...passed    [FAILED] PRIN command: ...").  A
# test with no verdict at all counts as failed, so no output can make a test disappear.
/^Suite: /      { suite = $2 }
/^  Test: /     { if (name != "") flush(); name = suite "." $2; skipped = 0; st = "" }
/\[SKIPPED\]/ && st == "" { skipped = 1 }
/\.\.\.passed([ \t]|$)|^passed([ \t]|$)/ { if (st == "") st = skipped ? "skipped" : "passed" }
/\.\.\.FAILED([ \t]|$)|^FAILED([ \t]|$)/ { if (st == "") st = "failed" }
function flush() { print name, (st != "" ? st : "failed"), tag; name = "" }
END { if (name != "") flush() }
