# swerun's command watchdog: kills what a swerun process's local commands left running once that process
# is gone, even when it died by SIGKILL. See src/environments/spawner.ts for the other side.
#
# swerun starts it as `/bin/sh command-watchdog.sh <prefix>` with a pipe on its stdin, and writes one line
# per command: "+<pid>" when it starts, "-<pid>" when it has ended. Every command's environment carries
# SWERUN_PROCESS_TAG=<prefix><environment>:<id>, which its descendants inherit. The pipe closes when swerun
# ends, however it ends; then the watchdog freezes (SIGSTOP) the process groups of the commands still
# running and every process whose environment carries the prefix (with the group it leads, if it leads
# one), scans /proc again until it finds no new one (so a tree that forks meanwhile is caught whole), kills
# them all (SIGKILL), and exits.
# Only shell builtins run per line: a command costs the watchdog no process. About 1 MiB of memory.

# Ctrl-C, a closed terminal or a signal to swerun's process group must not end the watchdog before swerun.
trap '' INT HUP TERM QUIT
prefix=$1
running=" "
while IFS= read -r line; do
  case $line in
    +*) running="$running${line#+} " ;;
    -*)
      pid=${line#-}
      case $running in
        *" $pid "*) running="${running%% "$pid" *} ${running#* "$pid" }" ;;
      esac
      ;;
  esac
done

for pid in $running; do kill -s STOP -- "-$pid" 2>/dev/null; done
stopped=" "
round=0
while [ "$round" -lt 100 ]; do
  round=$((round + 1))
  fresh=""
  for file in $(grep -lsaz "^SWERUN_PROCESS_TAG=$prefix" /proc/[0-9]*/environ); do
    pid=${file#/proc/}
    pid=${pid%/environ}
    case $stopped in
      *" $pid "*) ;;
      *) fresh="$fresh $pid" ;;
    esac
  done
  [ -z "$fresh" ] && break
  # shellcheck disable=SC2086
  kill -s STOP $fresh 2>/dev/null
  # And the group of each that leads one (a command's shell does): its members may lack the tag (`env -i`),
  # and a command whose "+pid" line had not come yet when swerun died is caught this way. A pid is never
  # the number of another's group (Linux does not reuse it while a group has it).
  for pid in $fresh; do kill -s STOP -- "-$pid" 2>/dev/null; done
  stopped="$stopped${fresh# } "
done
for pid in $running $stopped; do kill -s KILL -- "-$pid" 2>/dev/null; done
# shellcheck disable=SC2086
[ "$stopped" != " " ] && kill -s KILL $stopped 2>/dev/null
exit 0
