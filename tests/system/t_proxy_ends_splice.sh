#!/usr/bin/env bash
# t_proxy_ends.sh with the proxy in mode splice (sk_skb).
PX_MODE=splice exec "$(dirname "$0")/t_proxy_ends.sh"
