// CHECK: DATA: 1, 2, 3
// CHECK-NEXT: WHERE: set-by-the-manifest
// CHECK-NEXT: from stdin
// MERGED: to stderr
// WRONG: DATA: 3, 2, 1
// HALF: half of the output
