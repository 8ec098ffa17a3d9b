# Jacobi iterations for (D + L)·u = f on an unstructured graph (D the weighted degree plus one,
# L the weighted adjacency): an edge loop increments both end nodes through a map, a node loop
# updates u and reduces the largest change with a global max.
app jacobi: f64

set nodes, edges
map ends: edges -> nodes, 2

const one = 1.0
dat w: edges, 1 from mesh
dat f: nodes, 1 from mesh
dat diag: nodes, 1 = one
dat u: nodes, 1
dat sum: nodes, 1

global change: 1

# The diagonal: one plus the weights of a node's edges.
loop degree over edges
  we = w read
  d1 = diag via ends[0] inc
  d2 = diag via ends[1] inc
kernel
  d1 = we
  d2 = we
end

# Each edge adds its weight times the far end's value into both ends.
loop gather over edges
  we = w read
  u1 = u via ends[0] read
  u2 = u via ends[1] read
  s1 = sum via ends[0] inc
  s2 = sum via ends[1] inc
kernel
  s1 = we*u2
  s2 = we*u1
end

loop update over nodes
  rhs = f read
  d = diag read
  s = sum rw
  x = u rw
  largest = change max
kernel
  let next = (rhs + s)/d
  largest = abs(next - x)
  x = next
  s = 0.0
end

program
  degree
  repeat 40
    gather
    change = 0.0
    update
    print every 10: change
  end
end
