// The target that owns the test executables' precompiled header (tests/CMakeLists.txt): it builds
// the header once; this file only gives it something to compile and link.
int main() {
  return 0;
}
