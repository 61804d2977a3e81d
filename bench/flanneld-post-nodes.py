import json, sys, urllib.request, concurrent.futures as cf
items = json.load(open(sys.argv[1]))["items"]
def post(n):
    req = urllib.request.Request("http://127.0.0.1:6443/api/v1/nodes", data=json.dumps(n).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(req, timeout=30).read()
with cf.ThreadPoolExecutor(8) as ex:
    list(ex.map(post, items))
print("posted", len(items))
