"""The seed lesson's minimal MCP client over stdio (lesson 40), timed.

The class below is the lesson's ServidorMCP, kept as the lesson writes it
(standard library only: json, queue, subprocess, threading); only the
import of the lesson's own `entorno` module is left out, as nothing here
uses it. The lesson's client speaks revision 2026-07-28 (server/discover,
_meta on every request).

    python3 seed_client.py CALLS TOOL ARGS_JSON COMMAND...

starts COMMAND as the server, discovers it, calls TOOL with ARGS_JSON
CALLS times and prints one JSON line: the round trip's p50 and p99 in
microseconds, and this process's CPU time per call in microseconds.
"""
import json
import queue
import subprocess
import sys
import threading
import time

VERSION = "2026-07-28"
META = "io.modelcontextprotocol/"
LIMITE = 30                                          # segundos que espera cada respuesta


class ServidorMCP:
    """Un servidor MCP como subproceso, ya descubierto: habla nuestra versión y ofrece herramientas."""
    def __init__(self, *comando, traza=False):
        self.proceso = subprocess.Popen(comando, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, encoding="utf-8")
        self.lineas, self.n, self.traza = queue.Queue(), 0, traza
        self.hilo = threading.Thread(target=self.leer, daemon=True)
        self.hilo.start()
        r = self.pedir("server/discover")
        if VERSION not in r["supportedVersions"] or "tools" not in r["capabilities"]:
            self.cerrar()
            raise RuntimeError("el servidor MCP no habla %s o no ofrece herramientas" % VERSION)

    def leer(self):
        for linea in self.proceso.stdout:
            self.lineas.put(linea)
        self.lineas.put(None)                        # el servidor ha cerrado su salida

    def pedir(self, metodo, **params):
        """Una petición y su respuesta: el result, o una excepción con el mensaje del error."""
        self.n += 1
        meta = {META + "protocolVersion": VERSION, META + "clientCapabilities": {},
                META + "clientInfo": {"name": "agente-minimo", "version": "1"}}
        peticion = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": metodo,
                               "params": {"_meta": meta, **params}}, separators=(",", ":"))
        if self.traza:
            print("→", peticion)
        try:
            self.proceso.stdin.write(peticion + "\n")
            self.proceso.stdin.flush()
        except OSError:
            raise RuntimeError("el servidor MCP se ha cerrado")
        while True:
            try:
                linea = self.lineas.get(timeout=LIMITE)
            except queue.Empty:
                raise TimeoutError("el servidor MCP no ha contestado en %d s" % LIMITE)
            if linea is None:
                raise RuntimeError("el servidor MCP se ha cerrado")
            if self.traza:
                print("←", linea.rstrip("\n"))
            r = json.loads(linea)
            if r.get("id") == self.n:                # una respuesta tardía de otra petición se salta
                break
        if "error" in r:
            raise RuntimeError("%s (%d)" % (r["error"]["message"], r["error"]["code"]))
        return r["result"]

    def herramientas(self):
        """Las herramientas que anuncia el servidor, tal como las anuncia."""
        r = self.pedir("tools/list")
        if r.get("nextCursor"):
            raise RuntimeError("el servidor pagina su lista de herramientas, y este cliente no")
        return r["tools"]

    def llamar(self, nombre, argumentos):
        """El texto de la llamada, o una excepción con el texto del servidor si dice que ha fallado."""
        r = self.pedir("tools/call", name=nombre, arguments=argumentos)
        if r.get("resultType", "complete") != "complete":
            raise RuntimeError("el servidor pide más datos, y este cliente no sabe darlos")
        texto = "\n".join(c["text"] for c in r["content"] if c["type"] == "text")
        if r.get("isError"):
            raise RuntimeError(texto)
        return texto

    def cerrar(self):
        self.proceso.stdin.close()                   # el servidor sale al ver el final de su entrada
        try:
            self.proceso.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
        self.hilo.join()                             # sin salida que leer, el hilo acaba
        self.proceso.stdout.close()


def main():
    calls, tool, args, command = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]
    servidor = ServidorMCP(*command)
    try:
        names = [t["name"] for t in servidor.herramientas()]
        if tool not in names:
            raise RuntimeError("the server offers %s, not %s" % (", ".join(names), tool))
        servidor.llamar(tool, args)                  # one call before timing, as the Go side does
        rtt = []
        cpu0 = time.process_time()
        for _ in range(calls):
            t0 = time.perf_counter_ns()
            servidor.llamar(tool, args)
            rtt.append(time.perf_counter_ns() - t0)
        cpu = time.process_time() - cpu0
    finally:
        servidor.cerrar()
    rtt.sort()
    at = lambda p: rtt[min(int(p * len(rtt)), len(rtt) - 1)] / 1000
    print(json.dumps({"calls": calls, "p50_us": at(0.50), "p99_us": at(0.99),
                      "cpu_us_per_call": cpu * 1e6 / calls}))


if __name__ == "__main__":
    main()
