# Airfoil (OP2-Common apps/c/airfoil): a finite-volume Euler solver on an unstructured mesh of
# quadrilateral cells, in double precision. Sets, maps and the node coordinates and boundary
# codes come from the mesh (OP2's new_grid.dat, or weft's port of OP2's NACA0012 generator);
# the five loops are OP2's kernels with their access descriptors.
app airfoil: f64

set nodes, edges, bedges, cells

map pedge: edges -> nodes, 2
map pecell: edges -> cells, 2
map pbedge: bedges -> nodes, 2
map pbecell: bedges -> cells, 1
map pcell: cells -> nodes, 4

# The flow: Mach 0.4 (OP2's airfoil.cpp).
const gam = 1.4
const gm1 = gam - 1.0
const cfl = 0.9
const eps = 0.05
const mach = 0.4
const p_inf = 1.0
const r_inf = 1.0
const u_inf = sqrt(gam*p_inf/r_inf)*mach
const e_inf = p_inf/(r_inf*gm1) + 0.5*u_inf*u_inf
const qinf = [r_inf, r_inf*u_inf, 0.0, r_inf*e_inf]

dat p_x: nodes, 2 from mesh
dat p_bound: bedges, 1 from mesh
dat p_q: cells, 4 = qinf
dat p_qold: cells, 4
dat p_adt: cells, 1
dat p_res: cells, 4

global rms: 1

loop save_soln over cells
  q = p_q read
  qold = p_qold write
kernel
  qold[0] = q[0]
  qold[1] = q[1]
  qold[2] = q[2]
  qold[3] = q[3]
end

# The cell's time-step factor from its four sides.
loop adt_calc over cells
  x1 = p_x via pcell[0] read
  x2 = p_x via pcell[1] read
  x3 = p_x via pcell[2] read
  x4 = p_x via pcell[3] read
  q = p_q read
  adt = p_adt write
kernel
  let ri = 1.0/q[0]
  let u = ri*q[1]
  let v = ri*q[2]
  let c = sqrt(gam*gm1*(ri*q[3] - 0.5*(u*u + v*v)))
  let dx1 = x2[0] - x1[0]
  let dy1 = x2[1] - x1[1]
  let dx2 = x3[0] - x2[0]
  let dy2 = x3[1] - x2[1]
  let dx3 = x4[0] - x3[0]
  let dy3 = x4[1] - x3[1]
  let dx4 = x1[0] - x4[0]
  let dy4 = x1[1] - x4[1]
  let s1 = abs(u*dy1 - v*dx1) + c*sqrt(dx1*dx1 + dy1*dy1)
  let s2 = abs(u*dy2 - v*dx2) + c*sqrt(dx2*dx2 + dy2*dy2)
  let s3 = abs(u*dy3 - v*dx3) + c*sqrt(dx3*dx3 + dy3*dy3)
  let s4 = abs(u*dy4 - v*dx4) + c*sqrt(dx4*dx4 + dy4*dy4)
  adt = (s1 + s2 + s3 + s4)/cfl
end

# The flux across each interior edge, added to one cell and taken from the other.
loop res_calc over edges
  x1 = p_x via pedge[0] read
  x2 = p_x via pedge[1] read
  q1 = p_q via pecell[0] read
  q2 = p_q via pecell[1] read
  adt1 = p_adt via pecell[0] read
  adt2 = p_adt via pecell[1] read
  res1 = p_res via pecell[0] inc
  res2 = p_res via pecell[1] inc
kernel
  let dx = x1[0] - x2[0]
  let dy = x1[1] - x2[1]
  let ri1 = 1.0/q1[0]
  let p1 = gm1*(q1[3] - 0.5*ri1*(q1[1]*q1[1] + q1[2]*q1[2]))
  let vol1 = ri1*(q1[1]*dy - q1[2]*dx)
  let ri2 = 1.0/q2[0]
  let p2 = gm1*(q2[3] - 0.5*ri2*(q2[1]*q2[1] + q2[2]*q2[2]))
  let vol2 = ri2*(q2[1]*dy - q2[2]*dx)
  let mu = 0.5*(adt1 + adt2)*eps
  let f0 = 0.5*(vol1*q1[0] + vol2*q2[0]) + mu*(q1[0] - q2[0])
  let f1 = 0.5*(vol1*q1[1] + p1*dy + vol2*q2[1] + p2*dy) + mu*(q1[1] - q2[1])
  let f2 = 0.5*(vol1*q1[2] - p1*dx + vol2*q2[2] - p2*dx) + mu*(q1[2] - q2[2])
  let f3 = 0.5*(vol1*(q1[3] + p1) + vol2*(q2[3] + p2)) + mu*(q1[3] - q2[3])
  res1[0] = f0
  res1[1] = f1
  res1[2] = f2
  res1[3] = f3
  res2[0] = -f0
  res2[1] = -f1
  res2[2] = -f2
  res2[3] = -f3
end

# Boundary edges: the pressure on a wall (bound 1), the flux against the free stream elsewhere.
loop bres_calc over bedges
  x1 = p_x via pbedge[0] read
  x2 = p_x via pbedge[1] read
  q1 = p_q via pbecell[0] read
  adt1 = p_adt via pbecell[0] read
  res1 = p_res via pbecell[0] inc
  bound = p_bound read
kernel
  let dx = x1[0] - x2[0]
  let dy = x1[1] - x2[1]
  let ri1 = 1.0/q1[0]
  let p1 = gm1*(q1[3] - 0.5*ri1*(q1[1]*q1[1] + q1[2]*q1[2]))
  let vol1 = ri1*(q1[1]*dy - q1[2]*dx)
  let ri2 = 1.0/qinf[0]
  let p2 = gm1*(qinf[3] - 0.5*ri2*(qinf[1]*qinf[1] + qinf[2]*qinf[2]))
  let vol2 = ri2*(qinf[1]*dy - qinf[2]*dx)
  let mu = adt1*eps
  let f0 = 0.5*(vol1*q1[0] + vol2*qinf[0]) + mu*(q1[0] - qinf[0])
  let f1 = 0.5*(vol1*q1[1] + p1*dy + vol2*qinf[1] + p2*dy) + mu*(q1[1] - qinf[1])
  let f2 = 0.5*(vol1*q1[2] - p1*dx + vol2*qinf[2] - p2*dx) + mu*(q1[2] - qinf[2])
  let f3 = 0.5*(vol1*(q1[3] + p1) + vol2*(qinf[3] + p2)) + mu*(q1[3] - qinf[3])
  let wall = bound == 1.0
  res1[0] = select(wall, 0.0, f0)
  res1[1] = select(wall, p1*dy, f1)
  res1[2] = select(wall, -p1*dx, f2)
  res1[3] = select(wall, 0.0, f3)
end

# The new state from the saved one and the residual; the residual is cleared; rms sums del².
loop update over cells
  qold = p_qold read
  q = p_q write
  res = p_res rw
  adt = p_adt read
  rms = rms inc
kernel
  let adti = 1.0/adt
  let del0 = adti*res[0]
  let del1 = adti*res[1]
  let del2 = adti*res[2]
  let del3 = adti*res[3]
  q[0] = qold[0] - del0
  q[1] = qold[1] - del1
  q[2] = qold[2] - del2
  q[3] = qold[3] - del3
  res[0] = 0.0
  res[1] = 0.0
  res[2] = 0.0
  res[3] = 0.0
  rms = del0*del0 + del1*del1 + del2*del2 + del3*del3
end

program
  repeat 1000
    save_soln
    repeat 2
      adt_calc
      res_calc
      bres_calc
      rms = 0.0
      update
    end
    print every 100: sqrt(rms/cells)
  end
end
