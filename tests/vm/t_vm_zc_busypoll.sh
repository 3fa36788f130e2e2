#!/usr/bin/env bash
# tests/vm/t_vm_zc_busypoll.sh: runs inside the guest (FERRY_VM_NICS=4).
# t_vm_zc_xconnect.sh with both ports in `busy-poll on`: the workers run
# the queues' NAPI themselves; ping (its first reply counted), TCP and UDP
# byte-exact, conservation, as there. A file of its own so that ./run's
# VM_TESTS (a script and the guest's settings) can list it.
exec bash "$(dirname "$0")/t_vm_zc_xconnect.sh" 8 busy-poll
