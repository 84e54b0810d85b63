/* no_symbol.c - a shared object that is not a sampbench sampler. */
int not_a_sampler(void);
int not_a_sampler(void)
{
	return 0;
}
