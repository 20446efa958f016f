#!/bin/sh
# The runner must give up on a guest that does not finish.
# guest-init: no-leak-check
sleep 100000
