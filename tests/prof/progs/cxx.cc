// cxx.cc - a C++ program for the profiler's name tests (tests/prof/run.sh
// test_cxx): its CPU time is in a member function of a class template in a
// namespace and in the standard library's templates it calls, so that its
// stacks are full of mangled names. Built -O1 with frame pointers.
//
//   cxx N    N rounds of a map update keyed by a number's string
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace geo {
template <typename T> struct Table {
	std::map<std::string, T> m;
	__attribute__((noinline)) T churn(long n)
	{
		T s = 0;

		for (long i = 0; i < n; i++) {
			m[std::to_string(i % 512)] += static_cast<T>(i);
			s += static_cast<T>(m.size());
		}
		return s;
	}
};
} // namespace geo

int main(int argc, char **argv)
{
	geo::Table<long> t;
	long s = t.churn(argc > 1 ? atol(argv[1]) : 1000000);

	printf("%d\n", s > 0);
	return 0;
}
