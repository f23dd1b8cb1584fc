# The real OpenHands 1.58 analyzers' verdicts on the side-by-side table (side-by-side.test.ts):
# reads [{tool, arguments, summary, thought, reasoning}] as JSON on stdin, prints
# [{pattern, rail}] (the SecurityRisk names) on stdout. Run with the 1.58.2 venv's python.
import json
import sys

from openhands.sdk.event import ActionEvent
from openhands.sdk.llm import MessageToolCall, TextContent
from openhands.sdk.security import PatternSecurityAnalyzer, PolicyRailSecurityAnalyzer

pattern = PatternSecurityAnalyzer()
rail = PolicyRailSecurityAnalyzer()
out = []
for i, case in enumerate(json.load(sys.stdin)):
    event = ActionEvent(
        thought=[TextContent(text=t) for t in case.get("thought", [])],
        reasoning_content=case.get("reasoning"),
        action=None,
        tool_name=case["tool"],
        tool_call_id=f"call-{i}",
        tool_call=MessageToolCall(id=f"call-{i}", name=case["tool"], arguments=case["arguments"], origin="completion"),
        llm_response_id="r",
        summary=case.get("summary"),
    )
    out.append({"pattern": pattern.security_risk(event).value, "rail": rail.security_risk(event).value})
json.dump(out, sys.stdout)
