#!/usr/bin/env bash
# t_fault_veth_del.sh with the xconnect on the kernel path (DEVMAP in the classifier).
XC_PATH=kernel exec "$(dirname "$0")/t_fault_veth_del.sh" "$@"
