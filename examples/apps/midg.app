# MIDG2 (seed 000; Warburton's tcew/MIDG2): nodal discontinuous Galerkin for Maxwell's equations
# on tetrahedra at order N = 3 (Np = 20 nodes an element, Nfp = 10 a face), in single precision,
# as MIDG2 runs it: per Runge-Kutta stage the volume kernel (derivatives along r, s, t with the
# Dr, Ds, Dt matrices, then the curls with the element's geometric factors), the surface kernel
# (the upwind flux at every face node from the jump to the neighbour's value, then LIFT) and the
# low-storage update (Carpenter-Kennedy's five stages). The mesh (`weft_ip::midg::app`) gives the
# sets, the maps, the initial fields, the geometry and the matrices; the host sets `dt`.
app midg: f32

set elements, nodes, fnodes, faces

map enodes: elements -> nodes, 20     # an element's nodes
map efnodes: elements -> fnodes, 40   # its face nodes, face by face
map nelem: nodes -> elements, 1       # a node's element
map vmapM: fnodes -> nodes, 1         # a face node's own node
map vmapP: fnodes -> nodes, 1         # the node at the same point across the face
map fe: faces -> elements, 2          # the two elements of an interior face (for partitioning)

matrix Dr: 20 x 20 from mesh
matrix Ds: 20 x 20 from mesh
matrix Dt: 20 x 20 from mesh
matrix LIFT: 20 x 40 from mesh

dat p_u: nodes, 6 from mesh           # Hx, Hy, Hz, Ex, Ey, Ez
dat p_res: nodes, 6                   # the Runge-Kutta residual
dat p_g: elements, 9 from mesh        # rx, ry, rz, sx, sy, sz, tx, ty, tz
dat p_face: fnodes, 5 from mesh       # nx, ny, nz, Fscale, 1 on a wall
dat p_ur: nodes, 6
dat p_us: nodes, 6
dat p_ut: nodes, 6
dat p_vol: nodes, 6                   # the volume term of the right-hand side
dat p_flux: fnodes, 6
dat p_lift: nodes, 6                  # the surface term of the right-hand side

global dt: 1
global rka: 1
global rkb: 1

# Volume, part 1: every field's derivatives along r, s and t, element by element.
loop derivatives over elements
  u = p_u via enodes read
  ur = p_ur via enodes write
  us = p_us via enodes write
  ut = p_ut via enodes write
dense lanes 4
  ur = Dr * u
  us = Ds * u
  ut = Dt * u
end

# Volume, part 2: d/dx_a = r_a d/dr + s_a d/ds + t_a d/dt, then -curl E and curl H.
loop curl over nodes
  ur = p_ur read
  us = p_us read
  ut = p_ut read
  g = p_g via nelem[0] read
  vol = p_vol write
kernel
  let hz_y = g[1]*ur[2] + g[4]*us[2] + g[7]*ut[2]
  let hy_z = g[2]*ur[1] + g[5]*us[1] + g[8]*ut[1]
  let hx_z = g[2]*ur[0] + g[5]*us[0] + g[8]*ut[0]
  let hz_x = g[0]*ur[2] + g[3]*us[2] + g[6]*ut[2]
  let hy_x = g[0]*ur[1] + g[3]*us[1] + g[6]*ut[1]
  let hx_y = g[1]*ur[0] + g[4]*us[0] + g[7]*ut[0]
  let ez_y = g[1]*ur[5] + g[4]*us[5] + g[7]*ut[5]
  let ey_z = g[2]*ur[4] + g[5]*us[4] + g[8]*ut[4]
  let ex_z = g[2]*ur[3] + g[5]*us[3] + g[8]*ut[3]
  let ez_x = g[0]*ur[5] + g[3]*us[5] + g[6]*ut[5]
  let ey_x = g[0]*ur[4] + g[3]*us[4] + g[6]*ut[4]
  let ex_y = g[1]*ur[3] + g[4]*us[3] + g[7]*ut[3]
  vol[0] = -(ez_y - ey_z)
  vol[1] = -(ex_z - ez_x)
  vol[2] = -(ey_x - ex_y)
  vol[3] = hz_y - hy_z
  vol[4] = hx_z - hz_x
  vol[5] = hy_x - hx_y
end

# Surface, part 1: the upwind flux at every face node; a wall is a perfect conductor (H
# mirrored, E reversed).
loop flux over fnodes
  um = p_u via vmapM[0] read
  up = p_u via vmapP[0] read
  face = p_face read
  flux = p_flux write
kernel
  let wall = face[4] > 0.5
  let j0 = select(wall, 0.0, up[0] - um[0])
  let j1 = select(wall, 0.0, up[1] - um[1])
  let j2 = select(wall, 0.0, up[2] - um[2])
  let j3 = select(wall, -2.0*um[3], up[3] - um[3])
  let j4 = select(wall, -2.0*um[4], up[4] - um[4])
  let j5 = select(wall, -2.0*um[5], up[5] - um[5])
  let nx = face[0]
  let ny = face[1]
  let nz = face[2]
  let fs = face[3]
  let ndh = nx*j0 + ny*j1 + nz*j2
  let nde = nx*j3 + ny*j4 + nz*j5
  flux[0] = fs*(-ny*j5 + nz*j4 + (j0 - ndh*nx))*0.5
  flux[1] = fs*(-nz*j3 + nx*j5 + (j1 - ndh*ny))*0.5
  flux[2] = fs*(-nx*j4 + ny*j3 + (j2 - ndh*nz))*0.5
  flux[3] = fs*(ny*j2 - nz*j1 + (j3 - nde*nx))*0.5
  flux[4] = fs*(nz*j0 - nx*j2 + (j4 - nde*ny))*0.5
  flux[5] = fs*(nx*j1 - ny*j0 + (j5 - nde*nz))*0.5
end

# Surface, part 2: the fluxes of an element's face nodes lifted to its nodes.
loop lift over elements
  flux = p_flux via efnodes read
  lift = p_lift via enodes write
dense lanes 4
  lift = LIFT * flux
end

# The low-storage Runge-Kutta update of one stage.
loop update over nodes
  u = p_u rw
  res = p_res rw
  vol = p_vol read
  lift = p_lift read
  a = rka read
  b = rkb read
  dt = dt read
kernel
  let r0 = a*res[0] + dt*(vol[0] + lift[0])
  res[0] = r0
  u[0] = u[0] + b*r0
  let r1 = a*res[1] + dt*(vol[1] + lift[1])
  res[1] = r1
  u[1] = u[1] + b*r1
  let r2 = a*res[2] + dt*(vol[2] + lift[2])
  res[2] = r2
  u[2] = u[2] + b*r2
  let r3 = a*res[3] + dt*(vol[3] + lift[3])
  res[3] = r3
  u[3] = u[3] + b*r3
  let r4 = a*res[4] + dt*(vol[4] + lift[4])
  res[4] = r4
  u[4] = u[4] + b*r4
  let r5 = a*res[5] + dt*(vol[5] + lift[5])
  res[5] = r5
  u[5] = u[5] + b*r5
end

program
  repeat 3                            # time steps (`iterations` sets another count)
    rka = 0.0
    rkb = 0.14965902199922912
    derivatives
    curl
    flux
    lift
    update
    rka = -0.41789047449985195
    rkb = 0.37921031299962726
    derivatives
    curl
    flux
    lift
    update
    rka = -1.192151694642677
    rkb = 0.8229550293869817
    derivatives
    curl
    flux
    lift
    update
    rka = -1.6977846924715279
    rkb = 0.6994504559491221
    derivatives
    curl
    flux
    lift
    update
    rka = -1.5141834442571558
    rkb = 0.15305724796815198
    derivatives
    curl
    flux
    lift
    update
  end
end
