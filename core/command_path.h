/* command_path.h - is a command runnable, the way execvp would look for it. */
#ifndef SB_CORE_COMMAND_PATH_H
#define SB_CORE_COMMAND_PATH_H

/* 1 when cmd is runnable: a path (it has a '/') to an executable file, or a name found as
 * an executable regular file in a $PATH directory (empty entries: the current directory;
 * no $PATH: /usr/bin:/bin). Else 0. */
int command_runnable(const char *cmd);

#endif
