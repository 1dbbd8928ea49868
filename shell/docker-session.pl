# swerun's Docker session loop in Perl: the program of a session container's PID 1 where the image has
# perl and its POSIX module (every Debian and Ubuntu image: perl-base is essential there), which runs every
# action of a run (exec_mode: session). shell/docker-session.sh is the loop elsewhere; see
# src/environments/docker/session.ts for the other side.
#
# The container's command is `/bin/sh -c 'IFS= read -r l && eval "$l"' swerun-session <interpreter...>`.
# swerun's first line runs perl with POSIX to read the container's uname fields and perl's pointer size
# (the probe: tab-separated, one line) and, if that works, execs perl with a loader that reads the rest of
# what swerun sent (this file up to the line "swerun-session-perl-end", then the shell loop up to
# "swerun-session-script-end") and evals this file, with @ARGV the lifetime in seconds, keep (0 or 1), the
# probe and the interpreter (bash -lc). Elsewhere the shell skips this file and runs the shell loop.
#
# The loop itself loads no module where it knows setsid's system call number (x86-64 and arm64, a 64-bit
# perl): POSIX would add 2 MB to its memory, which every fork copies (about 0.1 ms an action here).
#
# Protocol, on the container's stdin and stdout:
#   1. The loop prints "swerun-session ready-perl", then the container's uname fields, tab-separated.
#   2. A request is a line "<nonce> <marker> <cwd bytes> <variables bytes> <command bytes>", then those
#      bytes: the cwd, the action's NAME=value variables each ended by a NUL, the command.
#   3. The loop forks; the child starts a new process session (setsid), takes stdin from /dev/null, stdout
#      and stderr to one pipe, cds, sets the variables and SWERUN_ACTION_ID=<marker> (so a timeout can
#      find and kill all of its processes) and execs the interpreter with the command: the same one fork
#      and exec a bare loop or `docker exec` costs, and nothing more.
#   4. The loop copies the pipe to stdout until every process holding it has closed it, as a `docker exec`
#      stream ends, then waits for the child and prints "\n<nonce> <exit code>\n" (128 + the signal's number
#      when a signal ended it, as a shell says). When it cannot fork, the end line says "fork-failed".
#      A line "stop <nonce>" on stdin while the action's output is open means swerun gave up on it (a
#      timeout whose kill left a process holding the output): the loop closes its end of the pipe, kills
#      what is left of the action's process group and ends the action. Such a line that comes after its
#      action has ended is skipped.
# The loop ends when its stdin closes (swerun ended or died), killing what is left of a running action,
# or, with keep, lets the action run and sleeps out its lifetime so the container can be entered; its
# lifetime's alarm ends it at any time. Being PID 1, it takes no other signal.
my ($lifetime, $keep, $probe, @interpreter) = @ARGV;
my @uname = split /\t/, $probe;
my $pointer_size = pop @uname;
my $setsid_call = $pointer_size == 8 ? { x86_64 => 112, aarch64 => 157 }->{ $uname[4] } : undef;
require POSIX unless $setsid_call;
# What was read from stdin and not yet used (the loader's `$rest`: what it read past the shell loop).
our $rest;
my $input = defined $rest ? $rest : '';
my $stdin_open = 1;

sub fill {
  return sysread(STDIN, $input, 65536, length $input);
}

sub take {
  my ($length) = @_;
  while (length($input) < $length) { return undef unless fill(); }
  return substr($input, 0, $length, '');
}

# The lifetime: an alarm (a child does not inherit it; its handler is undone by the child's exec).
$SIG{ALRM} = sub { exit 0 };
alarm($lifetime) if $lifetime > 0;
# An ignored SIGPIPE would pass through exec to every action: the actions get it as an exec's process has it.
$SIG{PIPE} = 'DEFAULT';

sub line {
  my $at;
  until (($at = index($input, "\n")) >= 0) { return undef unless fill(); }
  my $line = substr($input, 0, $at + 1, '');
  chop $line;
  return $line;
}

sub put {
  my ($bytes) = @_;
  my $at = 0;
  while ($at < length $bytes) {
    my $wrote = syswrite(STDOUT, $bytes, length($bytes) - $at, $at);
    if (!defined $wrote) { next if $!{EINTR}; exit 0; }
    $at += $wrote;
  }
}

put(join("\t", 'swerun-session ready-perl', @uname) . "\n");

while ($stdin_open && defined(my $head = line())) {
  # A give-up line that came after its action had ended.
  next if $head =~ /^stop /;
  my ($nonce, $marker, $cwd_length, $env_length, $command_length) = split / /, $head;
  my $cwd = take($cwd_length);
  my $env = take($env_length);
  my $command = take($command_length);
  last unless defined $command;
  my ($reader, $writer);
  my $pid = pipe($reader, $writer) ? fork() : undef;
  if (!defined $pid) {
    close $reader if $reader;
    close $writer if $writer;
    put("\n$nonce fork-failed\n");
    next;
  }
  if ($pid == 0) {
    close $reader;
    $setsid_call ? syscall($setsid_call) : POSIX::setsid();
    open(STDIN, '<', '/dev/null');
    # A standard handle reopened keeps its descriptor (perl dup2s onto it).
    open(STDOUT, '>&', $writer);
    open(STDERR, '>&', $writer);
    close $writer;
    unless (chdir $cwd) {
      put("swerun-session: cd: $cwd: $!\n");
      exit 2;
    }
    for my $entry (split /\0/, $env) {
      my ($name, $value) = split /=/, $entry, 2;
      $ENV{$name} = $value if defined $value;
    }
    $ENV{SWERUN_ACTION_ID} = $marker;
    { exec { $interpreter[0] } @interpreter, $command; }
    put("swerun-session: $interpreter[0]: $!\n");
    exit 127;
  }
  close $writer;
  my $given_up = 0;
  my $output = fileno($reader);
  while (1) {
    my $wanted = '';
    vec($wanted, $output, 1) = 1;
    vec($wanted, fileno(STDIN), 1) = 1 if $stdin_open;
    my $ready = select(my $got = $wanted, undef, undef, undef);
    next if $ready < 0;
    if ($stdin_open && vec($got, fileno(STDIN), 1)) {
      # swerun has gone: the container ends with this loop, so the action ends now (with keep it runs on).
      if (!fill()) { $stdin_open = 0; $given_up = !$keep; last if $given_up; next; }
      while (index($input, "\n") >= 0) { $given_up = 1 if line() eq "stop $nonce"; }
      last if $given_up;
    }
    if (vec($got, $output, 1)) {
      my $read = sysread($reader, my $chunk, 65536);
      next if !defined $read && $!{EINTR};
      last unless $read;
      put($chunk);
    }
  }
  close $reader;
  kill 'KILL', -$pid if $given_up;
  my $code = waitpid($pid, 0) == $pid ? $? : 0;
  # 1 is WNOHANG on Linux.
  1 while waitpid(-1, 1) > 0;
  $code = $code & 127 ? 128 + ($code & 127) : $code >> 8;
  put("\n$nonce $code\n");
}
if ($keep) { sleep 1 while 1; }
exit 0;
