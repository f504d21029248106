"""Talking to vCenter or ESXi: the connection, its session, and its recordings.

- ``connect``: the server's address, TLS, version negotiation, login and logout, and
  every way a connection fails as one ``ConnectError`` with a clear message;
- ``resilience``: bounded retries, one re-login for a lost session, and a fresh read
  of the inventory when a call cannot simply be repeated;
- ``answers``: answers pyVmomi cannot use, read whole, judged and named;
- ``credentials``: where the server, user and password come from (gpuaudit's and
  govc's variables, a password file, standard input, a prompt);
- ``cassette``: recording and replaying vCenter sessions as scrubbed vcrpy cassettes;
- ``anonymize``: pseudonyms for the names in a recorded cassette, for support cases;
- ``collect``: the collector, which reads an inventory in a fixed number of requests;
- ``obtain``: an inventory from a live server, a cassette, the demo or a saved file.

What the package may import (checked by the contracts in .importlinter): its modules
import one another, the inventory and the common helpers (``anonymize`` reads names
as the collector does), never what is done with an inventory (the results, the
model, the simulation, the rules, the plans, the verdict, the reports, the jobs, the
command line). Only ``connect``, ``resilience``, ``answers``, ``cassette``, the
collector and ``obtain`` speak pyVmomi. This file imports none of its modules.
"""
