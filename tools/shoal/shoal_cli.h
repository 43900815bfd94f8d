/* The shoal command: explain (prices a call's candidates from the model,
 * no MPI), tune and evaluate (measure; run them under mpirun), settings
 * (the SHOAL_* variables, no MPI). */
#ifndef SHOAL_CLI_H
#define SHOAL_CLI_H

int explain_main(int argc, char **argv);
int tune_main(int argc, char **argv);
int evaluate_main(int argc, char **argv);
int settings_main(int argc, char **argv);

#endif
