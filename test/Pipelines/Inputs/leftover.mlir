// No stage lowers the shape dialect: the pipeline fails in its last stage.
func.func @leftover(%a: index) -> index {
  %s = shape.index_to_size %a
  %t = shape.add %s, %s : !shape.size, !shape.size -> !shape.size
  %n = shape.size_to_index %t : !shape.size
  return %n : index
}
