// cxx.cc - C++ new and delete reach the malloc family through libstdc++:
// COUNT objects of 48 bytes (6 words: bucket 6) with new/delete, COUNT
// arrays of 10 ints (40 bytes: bucket 5) with new[]/delete[], and one
// std::vector grown to 1 MB (sampled for sure with a small period).
#include <cstdio>
#include <vector>

struct Obj {
	long v[6];
};

#define COUNT 2000

int main()
{
	for (int i = 0; i < COUNT; i++) {
		Obj *o = new Obj();
		o->v[0] = i;
		delete o;
		int *a = new int[10];
		a[0] = i;
		delete[] a;
	}
	std::vector<char> big;
	big.reserve(1 << 20);
	big.push_back(1);
	return big[0] == 1 ? 0 : 1;
}
