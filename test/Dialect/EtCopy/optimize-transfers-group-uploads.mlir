// RUN: etcopy-opt %s -split-input-file \
// RUN:   -etcopy-optimize-transfers="upload-group-bytes=64" \
// RUN:   | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// The result is a fixed point: the rounds sink the grouped uploads again and
// the grouping moves them back.
// RUN: etcopy-opt %s -split-input-file \
// RUN:   -etcopy-optimize-transfers="upload-group-bytes=64" \
// RUN:   | etcopy-opt -split-input-file -etcopy-optimize-transfers="upload-group-bytes=64" \
// RUN:   | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// Off by default: every upload stays just before its first user.
// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers \
// RUN:   | FileCheck %s --check-prefix=OFF
// One remark per upload moved.
// RUN: etcopy-opt %s -split-input-file \
// RUN:   -etcopy-optimize-transfers="upload-group-bytes=64" \
// RUN:   --remarks-filter-passed=etcopy -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK --implicit-check-not=UploadGrouped

// upload-group-bytes moves an upload up to the previous upload to the same
// device in its block when its source is defined there, so that the CUDA
// lowering issues them as one batch, up to the budget of moved bytes.

func.func private @layer(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Rule: the uploads of a chain's host inputs, computed before the first
// call, form one group in front of it (3 x 16 bytes moved, within 64).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>, %[[M0:.*]]: tensor<4xf32>, %[[M1:.*]]: tensor<4xf32>, %[[M2:.*]]: tensor<4xf32>, %[[M3:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[D0:.*]] = etcopy.h2d %[[M0]]
// CHECK-NEXT: %[[D1:.*]] = etcopy.h2d %[[M1]]
// CHECK-NEXT: %[[D2:.*]] = etcopy.h2d %[[M2]]
// CHECK-NEXT: %[[D3:.*]] = etcopy.h2d %[[M3]]
// CHECK-NEXT: %[[Y0:.*]] = call @layer(%[[X]], %[[D0]])
// CHECK-NEXT: %[[Y1:.*]] = call @layer(%[[Y0]], %[[D1]])
// CHECK-NEXT: %[[Y2:.*]] = call @layer(%[[Y1]], %[[D2]])
// CHECK-NEXT: %[[Y3:.*]] = call @layer(%[[Y2]], %[[D3]])
// CHECK-NEXT: return %[[Y3]]
// OFF-LABEL: func.func @chain
// OFF-NEXT: etcopy.h2d
// OFF-NEXT: call @layer
// OFF-NEXT: etcopy.h2d
// OFF-NEXT: call @layer
// OFF-NEXT: etcopy.h2d
// OFF-NEXT: call @layer
// OFF-NEXT: etcopy.h2d
// OFF-NEXT: call @layer
// REMARK-COUNT-3: remark: [Passed] UploadGrouped | Category:etcopy:etcopy-optimize-transfers | Function=chain | Remark="etcopy.h2d from the host to cuda:0 moved up to the previous upload to cuda:0, to be issued in one batch with it"
func.func @chain(%x: tensor<4xf32, #etcopy.device<cuda:0>>, %m0: tensor<4xf32>, %m1: tensor<4xf32>, %m2: tensor<4xf32>, %m3: tensor<4xf32>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  %d0 = etcopy.h2d %m0 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y0 = func.call @layer(%x, %d0) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %d1 = etcopy.h2d %m1 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y1 = func.call @layer(%y0, %d1) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %d2 = etcopy.h2d %m2 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y2 = func.call @layer(%y1, %d2) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %d3 = etcopy.h2d %m3 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y3 = func.call @layer(%y2, %d3) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %y3 : tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

func.func private @layer(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Negative: an upload of a value the host computes from a delegate's result
// cannot move above that delegate; it starts the next group, which the
// upload after it joins.
// CHECK-LABEL: func.func @computed_between
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>, %[[M0:.*]]: tensor<4xf32>, %[[M2:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[D0:.*]] = etcopy.h2d %[[M0]]
// CHECK-NEXT: %[[Y0:.*]] = call @layer(%[[X]], %[[D0]])
// CHECK-NEXT: %[[H:.*]] = etcopy.d2h %[[Y0]]
// CHECK-NEXT: %[[M1:.*]] = arith.addf %[[H]], %[[H]]
// CHECK-NEXT: %[[D1:.*]] = etcopy.h2d %[[M1]]
// CHECK-NEXT: %[[D2:.*]] = etcopy.h2d %[[M2]]
// CHECK-NEXT: %[[Y1:.*]] = call @layer(%[[Y0]], %[[D1]])
// CHECK-NEXT: %[[Y2:.*]] = call @layer(%[[Y1]], %[[D2]])
// REMARK: :[[# @LINE + 8]]:9: remark: [Passed] UploadGrouped | {{.*}} | Function=computed_between
func.func @computed_between(%x: tensor<4xf32, #etcopy.device<cuda:0>>, %m0: tensor<4xf32>, %m2: tensor<4xf32>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  %d0 = etcopy.h2d %m0 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y0 = func.call @layer(%x, %d0) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %y0 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %m1 = arith.addf %h, %h : tensor<4xf32>
  %d1 = etcopy.h2d %m1 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y1 = func.call @layer(%y0, %d1) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %d2 = etcopy.h2d %m2 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %y2 = func.call @layer(%y1, %d2) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %y2 : tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

func.func private @take(tensor<?xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @take_big(tensor<64xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @take_small(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @take_other(tensor<4xf32, #etcopy.device<cuda:1>>) attributes {etcopy.device = #etcopy.device<cuda:1>}

// Negative: an upload over the budget (256 bytes, of 64), one of
// unknown size and one to another device are not moved; each starts a
// group of its own device, which later small uploads join.
// CHECK-LABEL: func.func @not_moved
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4xf32>, %[[BIG:[^:]*]]: tensor<64xf32>, %[[DYN:[^:]*]]: tensor<?xf32>, %[[B:[^:]*]]: tensor<4xf32>, %[[C:[^:]*]]: tensor<4xf32>)
// CHECK-NEXT: %[[DA:.*]] = etcopy.h2d %[[A]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: call @take_small(%[[DA]])
// CHECK-NEXT: %[[DBIG:.*]] = etcopy.h2d %[[BIG]]
// CHECK-NEXT: call @take_big(%[[DBIG]])
// CHECK-NEXT: %[[DDYN:.*]] = etcopy.h2d %[[DYN]]
// CHECK-NEXT: %[[DB:.*]] = etcopy.h2d %[[B]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: call @take(%[[DDYN]])
// CHECK-NEXT: %[[DC:.*]] = etcopy.h2d %[[C]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: call @take_other(%[[DC]])
// CHECK-NEXT: call @take_small(%[[DB]])
// REMARK: :[[# @LINE + 10]]:9: remark: [Passed] UploadGrouped | {{.*}} | Function=not_moved
func.func @not_moved(%a: tensor<4xf32>, %big: tensor<64xf32>, %dyn: tensor<?xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) {
  %da = etcopy.h2d %a : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @take_small(%da) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  %dbig = etcopy.h2d %big : tensor<64xf32> -> tensor<64xf32, #etcopy.device<cuda:0>>
  func.call @take_big(%dbig) : (tensor<64xf32, #etcopy.device<cuda:0>>) -> ()
  %ddyn = etcopy.h2d %dyn : tensor<?xf32> -> tensor<?xf32, #etcopy.device<cuda:0>>
  func.call @take(%ddyn) : (tensor<?xf32, #etcopy.device<cuda:0>>) -> ()
  %dc = etcopy.h2d %c : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  func.call @take_other(%dc) : (tensor<4xf32, #etcopy.device<cuda:1>>) -> ()
  %db = etcopy.h2d %b : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @take_small(%db) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

func.func private @take_small(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}

// Negative: an upload in a nested block does not join a group of the
// enclosing one (the copy would run when the branch does not).
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32>, %[[P:[^:]*]]: i1)
// CHECK-NEXT: %[[DA:.*]] = etcopy.h2d %[[A]]
// CHECK-NEXT: call @take_small(%[[DA]])
// CHECK-NEXT: scf.if %[[P]]
// CHECK-NEXT: %[[DB:.*]] = etcopy.h2d %[[B]]
// CHECK-NEXT: call @take_small(%[[DB]])
func.func @nested(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: i1) {
  %da = etcopy.h2d %a : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @take_small(%da) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  scf.if %p {
    %db = etcopy.h2d %b : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @take_small(%db) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  return
}
