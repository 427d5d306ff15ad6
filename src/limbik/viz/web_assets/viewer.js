/* limbik viewer: draws the motions of #limbik-data with three.js (window.THREE). */
(function () {
  "use strict";
  var T = window.THREE;
  var meta = JSON.parse(document.getElementById("limbik-data").textContent);
  var params = new URLSearchParams(window.location.search);

  function floats(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }
  function bytesOf(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }

  var motions = meta.motions.map(function (m) {
    return { meta: m, pos: floats(m.positions), contacts: m.contacts ? bytesOf(m.contacts) : null };
  });
  // the slider's frames: meta.frameTime apart, until the longest motion ends
  var frames = Math.max.apply(null, motions.map(function (m) {
    return Math.round((m.meta.frames - 1) * m.meta.frameTime / meta.frameTime) + 1; }));
  function frameOf(m, t) { return Math.min(m.meta.frames - 1, Math.round(t * meta.frameTime / m.meta.frameTime)); }

  // bounds of every joint over every frame
  var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity], size = 0;
  motions.forEach(function (m) {
    var p = m.pos, J = m.meta.joints, flo = [Infinity, Infinity, Infinity], fhi = [-Infinity, -Infinity, -Infinity];
    for (var i = 0; i < p.length; i += 3) {
      for (var a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], p[i + a]); hi[a] = Math.max(hi[a], p[i + a]); }
      if (i < J * 3) for (var b = 0; b < 3; b++) { flo[b] = Math.min(flo[b], p[i + b]); fhi[b] = Math.max(fhi[b], p[i + b]); }
    }
    m.size = Math.max(fhi[0] - flo[0], fhi[1] - flo[1], fhi[2] - flo[2]);
    size = Math.max(size, m.size);
  });
  if (!(size > 0)) size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1);
  var span = Math.max(hi[0] - lo[0], hi[2] - lo[2], size);

  var stage = document.getElementById("stage");
  var fixed = /^(\d+)x(\d+)$/.exec(params.get("size") || "");
  if (fixed) {  // a fixed drawing size in CSS pixels (for pictures of the page)
    stage.style.flex = "none";
    stage.style.width = fixed[1] + "px";
    stage.style.height = fixed[2] + "px";
  }
  var renderer = new T.WebGLRenderer({ antialias: true });
  renderer.setPixelRatio(1);
  renderer.setClearColor(0xf4f4f2, 1);
  stage.insertBefore(renderer.domElement, stage.firstChild);
  var scene = new T.Scene();
  scene.add(new T.HemisphereLight(0xffffff, 0x8d8d8d, 2.2));
  var sun = new T.DirectionalLight(0xffffff, 1.6);
  sun.position.set(1, 2, 1.5);
  scene.add(sun);
  var camera = new T.PerspectiveCamera(40, 1, size * 0.01, span * 50 + size * 10);

  // ground: terrain mesh, or a grid at y = 0
  var groundY = 0, terrainMesh = null;
  if (meta.terrain) {
    var tr = meta.terrain, xs = floats(tr.x), zs = floats(tr.z), hs = floats(tr.heights);
    groundY = Math.min.apply(null, Array.prototype.slice.call(hs));
    if (tr.rows >= 2 && tr.cols >= 2) {
      var verts = new Float32Array(tr.rows * tr.cols * 3), idx = [];
      for (var i = 0; i < tr.rows; i++) for (var j = 0; j < tr.cols; j++) {
        var k = (i * tr.cols + j) * 3;
        verts[k] = xs[j]; verts[k + 1] = hs[i * tr.cols + j]; verts[k + 2] = zs[i];
        if (i + 1 < tr.rows && j + 1 < tr.cols) {
          var v = i * tr.cols + j;
          idx.push(v, v + tr.cols, v + 1, v + 1, v + tr.cols, v + tr.cols + 1);
        }
      }
      var geo = new T.BufferGeometry();
      geo.setAttribute("position", new T.BufferAttribute(verts, 3));
      geo.setIndex(idx);
      geo.computeVertexNormals();
      var mesh = new T.Mesh(geo, new T.MeshLambertMaterial({ color: 0xc9c2b0, side: T.DoubleSide,
        polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 }));
      mesh.name = "terrain";
      terrainMesh = mesh;
      scene.add(mesh);
      var wire = new T.LineSegments(new T.WireframeGeometry(geo),
        new T.LineBasicMaterial({ color: 0x8f887a, transparent: true, opacity: 0.35 }));
      scene.add(wire);
    } else {
      groundY = hs[0];
    }
  }
  var gridSize = Math.ceil(span * 1.6 / size) * size, cells = Math.min(200, Math.max(10, Math.round(gridSize / (size * 0.25))));
  var grid = new T.GridHelper(gridSize, cells, 0x9a9a9a, 0xcdcdcd);
  grid.position.set((lo[0] + hi[0]) / 2, groundY - size * 0.002, (lo[2] + hi[2]) / 2);
  scene.add(grid);

  // joints (spheres) and bones (cylinders), instanced per motion
  // joints and bones sized to each motion's own body
  function radiusOf(m) { return (m.size > 0 ? m.size : size) * 0.014; }
  var contactColour = new T.Color(0xe0262f);
  var sphere = new T.SphereGeometry(1, 12, 8), cylinder = new T.CylinderGeometry(1, 1, 1, 8);
  motions.forEach(function (m) {
    var colour = new T.Color(m.meta.colour), J = m.meta.joints;
    var bones = [];
    for (var j = 0; j < J; j++) if (m.meta.parents[j] >= 0) bones.push(j);
    m.bones = bones;
    m.colour = colour;
    m.joints = new T.InstancedMesh(sphere, new T.MeshLambertMaterial({ color: 0xffffff }), J);
    for (var q = 0; q < J; q++) m.joints.setColorAt(q, colour);
    m.sticks = new T.InstancedMesh(cylinder, new T.MeshLambertMaterial({ color: colour }), Math.max(bones.length, 1));
    m.sticks.count = bones.length;
    m.joints.frustumCulled = false; m.sticks.frustumCulled = false;
    scene.add(m.joints); scene.add(m.sticks);
    if (meta.traces) {
      m.meta.feet.forEach(function (f) {
        var n = m.meta.frames, line = new Float32Array(n * 3);
        for (var t = 0; t < n; t++) for (var a = 0; a < 3; a++) line[t * 3 + a] = m.pos[(t * J + f) * 3 + a];
        var g = new T.BufferGeometry();
        g.setAttribute("position", new T.BufferAttribute(line, 3));
        scene.add(new T.Line(g, new T.LineBasicMaterial({ color: colour, transparent: true, opacity: 0.6 })));
      });
    }
  });

  var tmp = new T.Matrix4(), quat = new T.Quaternion(), up = new T.Vector3(0, 1, 0),
      a3 = new T.Vector3(), b3 = new T.Vector3(), dir = new T.Vector3(), mid = new T.Vector3(), scl = new T.Vector3();
  function jointAt(m, t, j, out) {
    var k = (Math.min(t, m.meta.frames - 1) * m.meta.joints + j) * 3;
    return out.set(m.pos[k], m.pos[k + 1], m.pos[k + 2]);
  }
  function pose(t) {
    motions.forEach(function (m) {
      var J = m.meta.joints, tf = frameOf(m, t), radius = radiusOf(m);
      for (var j = 0; j < J; j++) {
        jointAt(m, tf, j, a3);
        tmp.compose(a3, quat.identity(), scl.set(radius, radius, radius));
        m.joints.setMatrixAt(j, tmp);
      }
      m.meta.feet.forEach(function (f, c) {
        var on = m.contacts && m.contacts[tf * m.meta.feet.length + c];
        m.joints.setColorAt(f, on ? contactColour : m.colour);
      });
      m.bones.forEach(function (j, n) {
        jointAt(m, tf, j, a3); jointAt(m, tf, m.meta.parents[j], b3);
        dir.subVectors(a3, b3);
        var len = dir.length();
        mid.addVectors(a3, b3).multiplyScalar(0.5);
        if (len > 0) quat.setFromUnitVectors(up, dir.multiplyScalar(1 / len)); else quat.identity();
        tmp.compose(mid, quat, scl.set(radius * 0.45, len, radius * 0.45));
        m.sticks.setMatrixAt(n, tmp);
      });
      m.joints.instanceMatrix.needsUpdate = true;
      if (m.joints.instanceColor) m.joints.instanceColor.needsUpdate = true;
      m.sticks.instanceMatrix.needsUpdate = true;
    });
  }

  // orbit camera: drag turns, right-drag or shift-drag pans, wheel zooms
  var target = new T.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
  // a clip that travels far is followed, from a distance that fits the character
  var travels = span > 4 * size;
  // three-quarter view from the side of the first motion's travel (where it travels)
  var m0 = motions[0], last0 = (m0.meta.frames - 1) * m0.meta.joints * 3,
      dx = m0.pos[last0] - m0.pos[0], dz = m0.pos[last0 + 2] - m0.pos[2];
  var theta = Math.hypot(dx, dz) > 0.5 * size ? Math.atan2(dz, -dx) + 0.5 : 0.6;
  if (params.has("azimuth")) theta = Number(params.get("azimuth")) * Math.PI / 180 || 0;
  var phi = 1.2;
  if (params.has("elevation")) phi = Math.min(Math.PI - 0.05, Math.max(0.05, (90 - (Number(params.get("elevation")) || 0)) * Math.PI / 180));
  var orbit = { theta: theta, phi: phi, dist: travels ? size * 3 : Math.max(span * 1.2, size * 2.5) };
  function placeCamera() {
    var s = Math.sin(orbit.phi);
    camera.position.set(target.x + orbit.dist * s * Math.sin(orbit.theta), target.y + orbit.dist * Math.cos(orbit.phi),
                        target.z + orbit.dist * s * Math.cos(orbit.theta));
    camera.lookAt(target);
  }
  var drag = null, canvas = renderer.domElement;
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });
  canvas.addEventListener("pointerdown", function (e) {
    drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener("pointerup", function () { drag = null; });
  canvas.addEventListener("pointermove", function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.pan) {
      var k = orbit.dist * 0.0016, right = new T.Vector3().setFromMatrixColumn(camera.matrix, 0),
          upv = new T.Vector3().setFromMatrixColumn(camera.matrix, 1);
      target.addScaledVector(right, -dx * k).addScaledVector(upv, dy * k);
    } else {
      orbit.theta -= dx * 0.008;
      orbit.phi = Math.min(Math.PI - 0.05, Math.max(0.05, orbit.phi - dy * 0.008));
    }
    draw();
  });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    orbit.dist = Math.min(span * 40 + size * 10, Math.max(size * 0.2, orbit.dist * Math.exp(e.deltaY * 0.001)));
    draw();
  }, { passive: false });

  function resize() {
    var w = stage.clientWidth || 640, h = stage.clientHeight || 480;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }

  // controls
  var slider = document.getElementById("slider"), playButton = document.getElementById("play"),
      speed = document.getElementById("speed"), follow = document.getElementById("follow"),
      readout = document.getElementById("readout");
  slider.max = String(frames - 1);
  follow.checked = travels;
  var frame = 0, playing = true, clock = 0, last = null;
  if (params.has("speed")) { var sp = Number(params.get("speed")); if (sp > 0) { speed.add(new Option(sp + "×", String(sp))); speed.value = String(sp); } }
  if (params.has("frame")) { frame = Math.max(0, Math.min(frames - 1, Math.floor(Number(params.get("frame")) || 0))); playing = false; }
  clock = frame * meta.frameTime;

  function draw() {
    pose(frame);
    if (follow.checked) {
      var m = motions[0];
      jointAt(m, frameOf(m, frame), 0, a3);
      target.set(a3.x, target.y, a3.z);
    }
    placeCamera();
    renderer.render(scene, camera);
    slider.value = String(frame);
    readout.textContent = "frame " + frame + " / " + (frames - 1) + "   " + (frame * meta.frameTime).toFixed(3) + " s";
    if (!playing) writeCheck();
  }
  function setPlaying(on) { playing = on; playButton.textContent = on ? "Pause" : "Play"; last = null; }
  playButton.addEventListener("click", function () { setPlaying(!playing); });
  slider.addEventListener("input", function () { setPlaying(false); frame = Number(slider.value); clock = frame * meta.frameTime; draw(); });
  follow.addEventListener("change", draw);
  var drawnSize = "";
  function fit() {
    var now = stage.clientWidth + "x" + stage.clientHeight;
    if (now !== drawnSize) { drawnSize = now; resize(); draw(); }
  }
  window.addEventListener("resize", fit);
  if (window.ResizeObserver) new ResizeObserver(fit).observe(stage);
  window.addEventListener("keydown", function (e) {
    if (e.key === " ") { setPlaying(!playing); e.preventDefault(); }
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      setPlaying(false);
      frame = Math.max(0, Math.min(frames - 1, frame + (e.key === "ArrowRight" ? 1 : -1)));
      clock = frame * meta.frameTime; draw();
    }
  });
  function tick(now) {
    if (playing) {
      if (last !== null) clock += (now - last) / 1000 * Number(speed.value);
      last = now;
      var duration = frames * meta.frameTime;
      if (clock >= duration) clock %= duration;
      var next = Math.min(frames - 1, Math.floor(clock / meta.frameTime + 1e-9));
      if (next !== frame) { frame = next; draw(); }
    }
    window.requestAnimationFrame(tick);
  }

  // legend and metrics table
  var legend = document.getElementById("legend");
  motions.forEach(function (m) {
    var row = document.createElement("div"), swatch = document.createElement("span");
    swatch.style.background = m.meta.colour;
    row.appendChild(swatch);
    row.appendChild(document.createTextNode(m.meta.label + " (" + m.meta.joints + " joints, " + m.meta.frames + " frames)"));
    legend.appendChild(row);
  });
  if (meta.terrain) { var tl = document.createElement("div"); tl.textContent = "terrain: " + meta.terrain.name; legend.appendChild(tl); }
  if (meta.table) {
    var side = document.getElementById("side"), h = document.createElement("h3"), table = document.createElement("table");
    h.textContent = meta.title;
    var head = document.createElement("tr");
    [""].concat(meta.table.columns).forEach(function (c) { var th = document.createElement("th"); th.textContent = c; head.appendChild(th); });
    table.appendChild(head);
    meta.table.rows.forEach(function (r) {
      var tr2 = document.createElement("tr");
      r.forEach(function (c) { var td = document.createElement("td"); td.textContent = c; tr2.appendChild(td); });
      table.appendChild(tr2);
    });
    side.appendChild(h); side.appendChild(table);
  }

  // the page's own check of what it loaded and drew
  function writeCheck() {
  var w = canvas.width, hgt = canvas.height, rect = canvas.getBoundingClientRect();
  var check = {
    frames: frames, frame: frame, width: w, height: hgt, left: rect.left, top: rect.top,
    background: [244, 244, 242],
    motions: motions.map(function (m) {
      var tf = frameOf(m, frame), screen = [];
      for (var j = 0; j < m.meta.joints; j++) {
        jointAt(m, tf, j, a3).project(camera);
        screen.push([rect.left + (a3.x + 1) / 2 * rect.width, rect.top + (1 - a3.y) / 2 * rect.height]);
      }
      return { joints: m.meta.joints, frames: m.meta.frames, label: m.meta.label, shown: tf,
               root0: [m.pos[0], m.pos[1], m.pos[2]], screen: screen };
    }),
    terrain: meta.terrain ? { rows: meta.terrain.rows, cols: meta.terrain.cols, name: meta.terrain.name,
      // up to 100 of the drawn mesh's vertices (x, y, z), evenly spread
      vertices: terrainMesh ? (function () {
        var at = terrainMesh.geometry.getAttribute("position"), out = [], n = at.count, step = Math.max(1, Math.floor(n / 100));
        for (var v = 0; v < n; v += step) out.push([at.getX(v), at.getY(v), at.getZ(v)]);
        return out; })() : [] } : null,
    errors: window.limbikErrors,
    resources: performance.getEntriesByType("resource").map(function (e) { return e.name; })
  };
  document.getElementById("limbik-check").textContent = JSON.stringify(check);
  }

  setPlaying(playing);
  fit();

  window.requestAnimationFrame(tick);
})();
