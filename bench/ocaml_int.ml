(* bench/ocaml_int.ml: OCaml 5's own producer, the comparison row of
   rte's int event (bench/run.py, group "producer"): EVENTS writes of an
   int user event (Runtime_events.User.write) per round, ROUNDS rounds,
   with runtime events started; prints the ns per event of each round as
   the JSON line the C benchmarks print. Compiled and run by bench/run.py
   with an OCaml 5.2 if it finds one. *)
type Runtime_events.User.tag += Bench

let ev = Runtime_events.User.register "bench.int" Bench Runtime_events.Type.int

let () =
  let n = int_of_string Sys.argv.(1) and rounds = int_of_string Sys.argv.(2) in
  Runtime_events.start ();
  let one () =
    let t0 = Unix.gettimeofday () in
    for i = 1 to n do
      Runtime_events.User.write ev i
    done;
    (Unix.gettimeofday () -. t0) *. 1e9 /. float_of_int n
  in
  let ns = List.init rounds (fun _ -> Printf.sprintf "%.3f" (one ())) in
  Printf.printf "{\"name\":\"ocaml_int\",\"ns\":[%s]}\n" (String.concat "," ns)
