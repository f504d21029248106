"""What the checks reason from: the facts an inventory implies (joined with NVIDIA's
and VMware's published figures) and the policy the user declares, with the reader
of its file.

It imports the inventory, the results' vocabulary, the knowledge and the common
helpers; everything that judges (simulation, rules, plans, the check) imports it.
"""
