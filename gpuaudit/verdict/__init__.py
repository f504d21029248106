"""From an inventory to a verdict: the check that runs the simulation, the rules and
the plans into one result, the judgement of that result (pass, fail, not proven,
against --fail-on), and the findings that changed since a previous result.

It sits above the plans and below the reports, which show what it decided.
"""
