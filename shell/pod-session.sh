# swerun's Kubernetes session loop: one long-lived pods/exec runs every action of a pod (exec_mode:
# session). See src/environments/kubernetes/pod-session.ts for the other side.
#
# The exec's command is `/bin/sh -c 'IFS= read -r l && eval "$l"' swerun-session <interpreter...>`.
# swerun writes one line that sets `w` (the folder of the actions' files), reads this file up to the line
# "swerun-session-script-end" and evals it; "$@" is the interpreter (bash -lc).
#
# Protocol, on the exec's stdin and stdout (as shell/docker-session.sh's):
#   1. The loop prints "swerun-session ready", then the pod's uname -s -n -r -v -m, tab-separated.
#   2. A request is: a line "<nonce> <marker>", the cwd, the lines of a snippet exporting the action's
#      variables, a line holding only the nonce, the command's lines, and the nonce again.
#   3. The action's output goes to the file $w/<marker>.out (and, with GNU tee, to the connection as it
#      comes), its exit code to $w/<marker>.rc: a connection that drops loses nothing. Once the action has
#      ended (and every process holding its output has closed it), the loop prints the file (unless tee
#      sent it), then "\n<nonce> <exit code>\n".
#   4. A request for a marker an earlier loop claimed (swerun sends it again, with a new nonce, on a new
#      connection after one dropped) runs nothing: the loop waits for that action's exit code, then prints
#      its output the same way. Claiming is creating the .out file with noclobber (atomic).
#   5. The files of an action are removed after the next request arrives (swerun has read them then).
# The action runs in a new process session (setsid, when the image has it), stdin from /dev/null, stderr
# merged into stdout, SWERUN_ACTION_ID=<marker> in its environment (a timeout kills all of its processes).
# The loop ends when its stdin closes; the actions it started run on until they end.

command -v cat >/dev/null 2>&1 || exit 3
exec 3>&1
s=
command -v setsid >/dev/null 2>&1 && s=setsid
trap : HUP INT QUIT TERM USR1 USR2
(umask 077 && mkdir -p "$w") 2>/dev/null || exit 4
# GNU tee -p ignores a broken pipe and goes on writing its file: with it, an action's output goes to the
# connection as it comes and into its file; without it (busybox), into the file, sent when the action ends.
t=
tee -p </dev/null >/dev/null 2>&1 && t=1
set -C
u=$(uname -s -n -r -v -m 2>/dev/null) || u=
k=${u%% *}; u=${u#* }; n=${u%% *}; u=${u#* }; m=${u%% *}; u=${u#* }
case $u in *' '*) ;; *) k= ;; esac
printf 'swerun-session ready\t%s\t%s\t%s\t%s\t%s\n' "$k" "$n" "$m" "${k:+${u% *}}" "${k:+${u##* }}"
p= g= h=0
while IFS=' ' read -r n m && IFS= read -r d && e= && c=; do
  while IFS= read -r x && [ "$x" != "$n" ]; do e="$e$x$l"; done
  IFS= read -r c; while IFS= read -r x && [ "$x" != "$n" ]; do c="$c$l$x"; done
  # The files of earlier actions go 32 at a time, in the background: off the actions' path.
  if [ -n "$p" ] && [ "$p" != "$m" ]; then
    g="$g $w/$p.out $w/$p.st $w/$p.rc" h=$((h + 1))
    if [ "$h" -ge 32 ]; then { rm -f $g & } 2>/dev/null; g= h=0; fi
  fi
  p=$m
  f=$w/$m
  r= x= o=
  if { true >"$f.out"; } 2>/dev/null; then
    # Claimed: run it. fd 4 carries the exit code past the output's pipe; `tee` (or `cat`) ends when every
    # process holding the output has closed it; then the code goes into the .rc file (one write: a reader
    # that finds the file non-empty has all of it).
    if [ -n "$t" ]; then o='tee -p -a "$f.out"'; else o='cat >>"$f.out"'; fi
    command eval '{
      { { ( set -- "$m" $s "$@" "$c"
            cd "$d" && eval "$e" && SWERUN_ACTION_ID=$1 && shift && export SWERUN_ACTION_ID && exec "$@"
          ) </dev/null 2>&1 4>&-
          echo $? >&4
        } | SWERUN_OUTPUT_OF=$m '"$o"' 4>&-
      } 4>"$f.st"
      IFS= read -r x <"$f.st"; printf "%s\n" "$x" >"$f.rc"
    } 3>&- &
    wait $!'; x=$?
  else
    # An earlier loop claimed it: wait for its end.
    while [ ! -s "$f.rc" ]; do sleep 0.1 2>/dev/null || sleep 1; done
  fi
  [ -s "$f.rc" ] && IFS= read -r r <"$f.rc"
  # No exit code: the loop could not fork to run the action (the pod is out of processes).
  if [ -z "$r" ]; then r=fork-failed; rm -f "$f.out" "$f.st"; p=; printf '\n%s %s\n' "$n" "$r"; continue; fi
  # The output, unless tee sent it as it came.
  [ -n "$t" ] && [ -n "$o" ] || cat "$f.out"
  printf '\n%s %s\n' "$n" "$r"
done
exit 0
