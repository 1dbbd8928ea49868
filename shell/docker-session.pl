# swerun's Docker session loop in Perl: the program of a session container's PID 1 where the image has
# perl (every Debian and Ubuntu image: perl-base is essential there) built for x86-64 or arm64, which runs
# every action of a run (exec_mode: session). shell/docker-session.sh is the loop elsewhere; see
# src/environments/docker/session.ts for the other side.
#
# The container's command is `/bin/sh -c 'IFS= read -r l && eval "$l"' swerun-session <interpreter...>`.
# swerun's first line checks that perl starts and, if so, execs perl with a loader that reads the rest of
# what swerun sent (this file up to the line "swerun-session-perl-end", then the shell loop up to
# "swerun-session-script-end", which it hands over as $shell_loop) and evals this file, with @ARGV the
# lifetime in seconds, keep (0 or 1), the lifetime as configured (a `sleep` duration) and the interpreter
# (bash -lc). Elsewhere the shell skips this file and runs the shell loop.
#
# The loop loads no module: it makes the system calls core perl lacks or wraps in more than an action
# needs (setsid, uname, pipe2, dup3, read, close) by number, known for x86-64 and arm64 (read from perl's
# own ELF header); on any other machine it execs /bin/sh with the shell loop instead. A module such as
# POSIX would cost every container ~9 ms to load and every action ~0.1 ms (its 2 MB of memory are copied
# by each fork).
#
# Protocol, on the container's stdin and stdout:
#   1. The loop prints "swerun-session ready-perl", then the container's uname fields, tab-separated.
#   2. A request is a line "<nonce> <marker> <cwd bytes> <variables bytes> <command bytes>", then those
#      bytes: the cwd, the action's NAME=value variables each ended by a NUL, the command.
#   3. The loop cds and sets the action's variables and SWERUN_ACTION_ID=<marker> (so a timeout can find
#      and kill all of its processes) in itself, then forks; the child starts a new process session
#      (setsid), takes stdin from /dev/null, stdout and stderr to one pipe, and execs the interpreter with
#      the command: the same one fork and exec a bare loop or `docker exec` costs, and nothing more. The
#      child does no more than that because each page a process touches after a fork is a copy (or a
#      fault): the pipe is two raw descriptors (pipe2, dup3, read, close by number, no perl handle), and
#      the variables stay set while the next action has the same ones.
#   4. The loop reads the pipe until every process holding it has closed it, as a `docker exec` stream
#      ends, then waits for the child and prints the output and "\n<nonce> <exit code>\n" (128 + the
#      signal's number when a signal ended it, as a shell says) in one write; output past 64 KiB is written
#      as it comes. When it cannot fork, the end line says "fork-failed".
#      A line "stop <nonce>" on stdin while the action's output is open means swerun gave up on it (a
#      timeout whose kill left a process holding the output): the loop closes its end of the pipe, kills
#      what is left of the action's process group and ends the action. Such a line that comes after its
#      action has ended is skipped.
# The loop ends when its stdin closes (swerun ended or died), killing what is left of a running action,
# or, with keep, lets the action run and sleeps out its lifetime so the container can be entered; its
# lifetime's alarm ends it at any time. Being PID 1, it takes no other signal.
my ($lifetime, $keep, $lifetime_text, @interpreter) = @ARGV;
# The shell loop's text, from the loader; the first bytes of perl's ELF file (a test may set them).
our ($shell_loop, $elf);
if (!defined $elf && open(my $exe, '<', '/proc/self/exe')) { sysread($exe, $elf, 20); }
# The system calls core perl lacks or wraps in more than an action needs, by number for perl's machine
# (64-bit, little-endian): x86-64, arm64. setsid and uname; pipe2, dup3, read and close, with which an
# action's pipe is raw descriptors (no perl handle to make and free for each action).
my $machine = defined $elf && $elf =~ /^\x7fELF\x02\x01/ && length $elf >= 20 ? unpack('v', substr($elf, 18, 2)) : 0;
my ($setsid_call, $uname_call, $pipe2_call, $dup3_call, $read_call, $close_call) =
  $machine == 62 ? (112, 63, 293, 292, 0, 3) : $machine == 183 ? (157, 160, 59, 24, 63, 57) : ();
unless ($setsid_call) {
  # As the loader sets them for the shell loop: its lifetime, keep, and `l`, a newline.
  my $settings = "lifetime=$lifetime_text keep=" . ($keep ? 1 : '') . " l='\n'";
  exec { '/bin/sh' } 'sh', '-c', "$settings\n$shell_loop", 'swerun-session', @interpreter;
  exit 3;
}
# struct utsname: six fields of 65 bytes (the domain name last, unused).
my $utsname = "\0" x 390;
my @uname = syscall($uname_call, $utsname) == 0 ? unpack('Z65 Z65 Z65 Z65 Z65', $utsname) : ();
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

# Each action's stdin (dup3'd onto its 0), opened once; the loop's own directory, from which a relative cwd
# is taken (the loop cds before it forks).
open(my $null, '<', '/dev/null');
my $null_fd = fileno($null) // -1;
opendir(my $home, '.');
# The variables the action before set (`$last_env`, as sent), each with the value it had before ([name,
# value] pairs, in order); an action with the same variables as the one before sets none.
my ($last_env, @restore) = ('');
# pipe2's two descriptors; what a read of the output gets.
my $fds = "\0" x 8;
my $chunk = "\0" x 65536;

while ($stdin_open && defined(my $head = line())) {
  # A give-up line that came after its action had ended.
  next if $head =~ /^stop /;
  my ($nonce, $marker, $cwd_length, $env_length, $command_length) = split / /, $head;
  my $cwd = take($cwd_length);
  my $env = take($env_length);
  my $command = take($command_length);
  last unless defined $command;
  # The action's directory and variables are the loop's own before it forks, so that the child has nothing
  # to do but its session and descriptors before the exec: what a child does after a fork copies the pages
  # it touches, and so does the loop for those it touches after. The variables are put back before the
  # next action's are set.
  if ($env ne $last_env) {
    while (@restore) {
      my $value = pop @restore;
      my $name = pop @restore;
      if (defined $value) { $ENV{$name} = $value; } else { delete $ENV{$name}; }
    }
    for my $entry (split /\0/, $env) {
      my ($name, $value) = split /=/, $entry, 2;
      next unless defined $value;
      push @restore, $name, $ENV{$name};
      $ENV{$name} = $value;
    }
    $last_env = $env;
  }
  $ENV{SWERUN_ACTION_ID} = $marker;
  unless (($cwd =~ m{^/} || chdir $home) && chdir $cwd) {
    put("swerun-session: cd: $cwd: $!\n\n$nonce 2\n");
    next;
  }
  # The output's pipe, both ends closed on exec (O_CLOEXEC).
  my ($output, $writer) = syscall($pipe2_call, $fds, 0x80000) == 0 ? unpack('i2', $fds) : (-1, -1);
  my $pid = $output >= 0 ? fork() : undef;
  if (!defined $pid) {
    if ($output >= 0) { syscall($close_call, $output); syscall($close_call, $writer); }
    put("\n$nonce fork-failed\n");
    next;
  }
  if ($pid == 0) {
    syscall($setsid_call);
    syscall($dup3_call, $null_fd, 0, 0) == 0 or syscall($close_call, 0);
    syscall($dup3_call, $writer, 1, 0);
    syscall($dup3_call, $writer, 2, 0);
    { exec { $interpreter[0] } @interpreter, $command; }
    put("swerun-session: $interpreter[0]: $!\n");
    exit 127;
  }
  syscall($close_call, $writer);
  my $given_up = 0;
  # The output is held until 64 KiB or the action's end, then written with its end line: swerun reads an
  # action's output whole, and one write is one frame through the daemon instead of one per chunk.
  my $held = '';
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
      my $read = syscall($read_call, $output, $chunk, 65536);
      next if $read < 0 && $!{EINTR};
      last if $read <= 0;
      $held .= substr($chunk, 0, $read);
      if (length $held >= 65536) { put($held); $held = ''; }
    }
  }
  syscall($close_call, $output);
  kill 'KILL', -$pid if $given_up;
  my $code = waitpid($pid, 0) == $pid ? $? : 0;
  # 1 is WNOHANG on Linux.
  1 while waitpid(-1, 1) > 0;
  $code = $code & 127 ? 128 + ($code & 127) : $code >> 8;
  put("$held\n$nonce $code\n");
}
if ($keep) { sleep 1 while 1; }
exit 0;
