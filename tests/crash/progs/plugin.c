/* plugin: a shared library loaded with dlopen by dlcrash; it crashes in
 * plugin_crash_here(), called through plugin_entry(). */
static volatile int *volatile g_null;

void plugin_crash_here(int x);
void plugin_entry(int x);

void plugin_crash_here(int x)
{
	*g_null = x;
}

void plugin_entry(int x)
{
	plugin_crash_here(x + 1);
}
