-- Session tree: normalising pi/getTree results (nested or flat) and rendering them as text lines.
local M = {}

local PREVIEW = 120

local function one_line(text)
  text = tostring(text or ""):gsub("[\r\n\t]+", " ")
  if #text > PREVIEW then
    text = text:sub(1, PREVIEW) .. "…"
  end
  return text
end

--- Text of a message/custom_message `content` (string or blocks).
function M.content_text(content)
  if type(content) == "string" then
    return content
  end
  if type(content) ~= "table" then
    return ""
  end
  local parts = {}
  for _, block in ipairs(content) do
    if type(block) == "table" then
      if block.type == "text" and block.text then
        table.insert(parts, block.text)
      elseif block.type == "toolCall" then
        table.insert(parts, "[" .. tostring(block.name) .. "]")
      elseif block.type == "image" then
        table.insert(parts, "[image]")
      end
    end
  end
  return table.concat(parts, " ")
end

--- A TreeNode-like record for a raw entry (used when building the tree from pi/getEntries).
local function node_from_entry(entry)
  local node = {
    id = entry.id,
    parentId = entry.parentId,
    type = entry.type,
    timestamp = entry.timestamp,
    children = {},
  }
  local kind = entry.type
  local preview
  if kind == "message" and type(entry.message) == "table" then
    local msg = entry.message
    node.role = msg.role
    if msg.role == "bashExecution" then
      preview = "$ " .. tostring(msg.command or "")
    else
      preview = M.content_text(msg.content)
    end
  elseif kind == "custom_message" then
    preview = M.content_text(entry.content)
  elseif kind == "compaction" or kind == "branch_summary" then
    preview = entry.summary
  elseif kind == "session_info" then
    preview = entry.name
  elseif kind == "model_change" then
    preview = tostring(entry.provider) .. "/" .. tostring(entry.modelId)
  elseif kind == "thinking_level_change" then
    preview = entry.thinkingLevel
  elseif kind == "label" then
    preview = entry.label
  elseif kind == "custom" then
    preview = entry.customType
  end
  if preview and preview ~= "" then
    node.preview = one_line(preview)
  end
  return node
end

--- Build {leafId, roots} from entries in file order (labels resolved as pi does: last one wins).
function M.from_entries(entries, leaf_id)
  local by_id, order, labels = {}, {}, {}
  for _, entry in ipairs(entries) do
    if entry.type ~= "session" and entry.id then
      local node = node_from_entry(entry)
      by_id[node.id] = node
      table.insert(order, node)
      if entry.type == "label" and entry.targetId then
        labels[entry.targetId] = entry.label -- nil clears
      end
    end
  end
  local roots = {}
  for _, node in ipairs(order) do
    node.label = labels[node.id]
    local parent = node.parentId and by_id[node.parentId]
    if parent then
      table.insert(parent.children, node)
    else
      table.insert(roots, node)
    end
  end
  return { leafId = leaf_id, roots = roots }
end

--- Normalise a pi/getTree result: nested `roots`, or the flat form offered for deep trees
--- (`{format = "flat", rootIds, nodes}`, each node with `childIds` instead of `children`).
--- Returns {leafId, roots} with children lists.
function M.normalise(result)
  result = result or {}
  if result.roots then
    return { leafId = result.leafId, roots = result.roots }
  end
  local flat = result.nodes or {}
  local by_id, roots = {}, {}
  for _, n in ipairs(flat) do
    n.children = {}
    by_id[n.id] = n
  end
  if result.rootIds then
    for _, n in ipairs(flat) do
      for _, child in ipairs(n.childIds or {}) do
        if by_id[child] then
          table.insert(n.children, by_id[child])
        end
      end
    end
    for _, id in ipairs(result.rootIds) do
      if by_id[id] then
        table.insert(roots, by_id[id])
      end
    end
  else
    for _, n in ipairs(flat) do
      local parent = n.parentId and by_id[n.parentId]
      if parent then
        table.insert(parent.children, n)
      else
        table.insert(roots, n)
      end
    end
  end
  return { leafId = result.leafId, roots = roots }
end

local function describe(node)
  local head
  if node.type == "message" then
    head = node.role or "message"
  else
    head = node.type or "?"
  end
  local text = head
  if node.preview and node.preview ~= "" then
    text = text .. ": " .. one_line(node.preview)
  end
  if node.label then
    text = text .. "  [" .. one_line(node.label) .. "]"
  end
  return text
end

--- Render a tree to lines. Linear stretches stay at one indentation level; branches get
--- ├─ / └─ connectors (as pi's tree view). Gutter: ">" the leaf, "*" on the leaf's path.
--- Returns lines, ids (ids[i] = entry id of lines[i]).
function M.render(tree)
  tree = M.normalise(tree)
  local leaf = tree.leafId
  local parent_of = {}
  local stack = {}
  local roots = tree.roots or {}
  -- collect parents (iteratively; trees can be thousands deep)
  local walk = {}
  for _, r in ipairs(roots) do
    table.insert(walk, r)
  end
  while #walk > 0 do
    local n = table.remove(walk)
    for _, c in ipairs(n.children or {}) do
      parent_of[c.id] = n.id
      table.insert(walk, c)
    end
  end
  local on_path = {}
  local cur = leaf
  while cur do
    on_path[cur] = true
    cur = parent_of[cur]
  end

  local function push_children(children, body)
    local count = #children
    if count == 1 then
      table.insert(stack, { node = children[1], head = body, body = body })
      return
    end
    for i = count, 1, -1 do
      local last = i == count
      table.insert(stack, {
        node = children[i],
        head = body .. (last and "└─ " or "├─ "),
        body = body .. (last and "   " or "│  "),
      })
    end
  end

  push_children(roots, "")
  local lines, ids = {}, {}
  while #stack > 0 do
    local item = table.remove(stack)
    local node = item.node
    local gutter = (node.id == leaf and "> ") or (on_path[node.id] and "* ") or "  "
    local line = gutter .. item.head .. describe(node)
    if node.id == leaf then
      line = line .. "  ← leaf"
    end
    table.insert(lines, line)
    table.insert(ids, node.id)
    push_children(node.children or {}, item.body)
  end
  if #lines == 0 then
    lines = { "(empty session)" }
    ids = { false }
  end
  return lines, ids
end

return M
